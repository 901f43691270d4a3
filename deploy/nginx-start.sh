#!/bin/sh
# The proxy's command in docker-compose.yml: deploy/nginx.conf with the container's first nameserver as
# nginx's resolver (only the first: podman lists the host's resolvers after its own, and they do not know
# the replicas' names), then nginx in the foreground.
set -e
resolver=$(awk '$1 == "nameserver" { if ($2 ~ /:/) print "[" $2 "]"; else print $2; exit }' /etc/resolv.conf)
sed "s/@RESOLVER@/${resolver:-127.0.0.11}/" /etc/nginx/plinth/nginx.conf >/tmp/nginx.conf
exec nginx -c /tmp/nginx.conf -g 'daemon off;'
