#!/usr/bin/env bash
# Makes docker-compose.yml runnable on a Debian machine with no Docker daemon and no container registry
# (CI, this project's build machines): installs podman and podman-compose, configures podman for a machine
# without systemd (runc, cgroupfs, no default ulimits), and builds local stand-ins for the images the compose
# file names, tagged with the official names:
#   debian:bookworm-slim   debootstrap (minbase) from the Debian mirror apt already uses
#   node:20-bookworm-slim  that image plus this machine's Node and npm, user `node` (uid 1000)
#   postgres:17            Debian's PostgreSQL, entrypoint honouring POSTGRES_USER/PASSWORD/DB and PGDATA
#   redis:7                Debian's redis-server
#   nginx:1.27             Debian's nginx with the stream module, and an entrypoint doing what the official
#                          image's does with /etc/nginx/templates (envsubst into NGINX_ENVSUBST_OUTPUT_DIR)
#                          and NGINX_ENTRYPOINT_LOCAL_RESOLVERS (NGINX_LOCAL_RESOLVERS from /etc/resolv.conf)
# The stand-ins carry Debian's versions (PostgreSQL 15, Redis 7.0, nginx 1.22), not the tags'.
# Images that already exist are kept. Usage (as root): bash scripts/container-stand-ins.sh
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
log() { echo "container-stand-ins: $*" >&2; }

missing=()
for pair in podman:podman podman-compose:podman-compose runc:runc debootstrap:debootstrap; do
  command -v "${pair%%:*}" >/dev/null || missing+=("${pair#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]}"
  apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null
fi
command -v node >/dev/null || { log "node is required (its binary goes into the node stand-in)"; exit 1; }

# No systemd here: cgroupfs instead of the systemd cgroup manager, runc, and no default ulimits (the
# container's limits cannot be raised above the ones this process has).
mkdir -p /etc/containers
cat >/etc/containers/containers.conf <<'CONF'
[containers]
default_ulimits = []
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
runtime = "runc"
CONF

W=${STAND_INS_DIR:-/var/tmp/plinth-stand-ins}
mkdir -p "$W"
exists() { podman image exists "docker.io/library/$1"; }

# build TAG: builds the Containerfile read from stdin in a fresh context directory ($ctx), after running
# the optional shell snippet $2 that puts files into $ctx.
build() {
  local tag=$1 ctx="$W/ctx-${1//[:\/]/_}"
  rm -rf "$ctx" && mkdir -p "$ctx" && cat >"$ctx/Containerfile"
  if [ -n "${2:-}" ]; then eval "$2"; fi
  log "building $tag"
  podman build --network=host -q -t "docker.io/library/$tag" "$ctx" >/dev/null
}

if ! exists debian:bookworm-slim; then
  mirror=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
  [ -n "$mirror" ] || mirror=$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list)
  log "debootstrap bookworm from $mirror"
  rm -rf "$W/rootfs"
  debootstrap --variant=minbase bookworm "$W/rootfs" "$mirror" >"$W/debootstrap.log" 2>&1 \
    || { tail -20 "$W/debootstrap.log" >&2; exit 1; }
  rm -rf "$W/rootfs/var/cache/apt/archives/"*.deb "$W/rootfs/var/lib/apt/lists/"*
  tar -C "$W/rootfs" -cf "$W/rootfs.tar" . && podman import "$W/rootfs.tar" docker.io/library/debian:bookworm-slim >/dev/null
  rm -rf "$W/rootfs" "$W/rootfs.tar"
fi

exists node:20-bookworm-slim || build node:20-bookworm-slim '
  cp "$(readlink -f "$(command -v node)")" "$ctx/node"
  cp -a "$(dirname "$(readlink -f "$(command -v npm)")")/.." "$ctx/npm"
  cp /etc/ssl/certs/ca-certificates.crt "$ctx/ca.crt"' <<'CF'
FROM docker.io/library/debian:bookworm-slim
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
# This machine's certificate authorities, so that npm inside a build reaches the registry as npm here does.
COPY ca.crt /usr/local/share/ca-certificates/stand-in.crt
ENV NODE_EXTRA_CA_CERTS=/usr/local/share/ca-certificates/stand-in.crt
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node
CMD ["node"]
CF

exists postgres:17 || build postgres:17 'cat >"$ctx/entrypoint.sh" <<"SH"
#!/bin/bash
# Does what the official image entrypoint does on first start (initdb with POSTGRES_*), then runs postgres.
set -e
export PGDATA=${PGDATA:-/var/lib/postgresql/data}
bin=$(ls -d /usr/lib/postgresql/*/bin | tail -1)
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" /var/run/postgresql
  chown -R postgres:postgres "$PGDATA" /var/run/postgresql && chmod 700 "$PGDATA"
  exec runuser -u postgres -- "$0" "$@"
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  user=${POSTGRES_USER:-postgres} pw=$(mktemp)
  printf "%s" "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}" >"$pw"
  "$bin/initdb" -D "$PGDATA" -U "$user" --pwfile="$pw" --auth-host=scram-sha-256 --auth-local=trust >/dev/null
  rm -f "$pw"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  "$bin/pg_ctl" -D "$PGDATA" -o "-c listen_addresses=" -w start >/dev/null
  db=${POSTGRES_DB:-$user}
  [ "$db" = postgres ] || "$bin/psql" -U "$user" -d postgres -qc "CREATE DATABASE \"$db\""
  "$bin/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null
fi
exec "$bin/postgres" -D "$PGDATA" -c listen_addresses="*" "$@"
SH
chmod +x "$ctx/entrypoint.sh"' <<'CF'
FROM docker.io/library/debian:bookworm-slim
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends postgresql >/dev/null \
 && rm -rf /var/lib/apt/lists/* \
 && ln -s "$(ls -d /usr/lib/postgresql/*/bin | tail -1)/pg_isready" /usr/local/bin/pg_isready
COPY entrypoint.sh /usr/local/bin/docker-entrypoint.sh
ENV PGDATA=/var/lib/postgresql/data
STOPSIGNAL SIGINT
ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]
EXPOSE 5432
CF

exists redis:7 || build redis:7 <<'CF'
FROM docker.io/library/debian:bookworm-slim
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends redis-server >/dev/null \
 && rm -rf /var/lib/apt/lists/*
CMD ["redis-server", "--protected-mode", "no", "--bind", "0.0.0.0"]
EXPOSE 6379
CF

exists nginx:1.27 || build nginx:1.27 'cat >"$ctx/entrypoint.sh" <<"SH"
#!/bin/sh
# What the official image entrypoint does for templates: NGINX_LOCAL_RESOLVERS from /etc/resolv.conf when
# NGINX_ENTRYPOINT_LOCAL_RESOLVERS is set; /etc/nginx/templates/X.template rendered with the environment
# (only variables that are set) into ${NGINX_ENVSUBST_OUTPUT_DIR:-/etc/nginx/conf.d}/X.
set -e
if [ -n "${NGINX_ENTRYPOINT_LOCAL_RESOLVERS:-}" ]; then
  NGINX_LOCAL_RESOLVERS=$(awk '\''/^nameserver/ { if ($2 ~ ":") printf "[%s] ", $2; else printf "%s ", $2 }'\'' /etc/resolv.conf)
  export NGINX_LOCAL_RESOLVERS
fi
out=${NGINX_ENVSUBST_OUTPUT_DIR:-/etc/nginx/conf.d}
if [ -d /etc/nginx/templates ]; then
  vars=$(env | sed -n "s/^\([A-Za-z_][A-Za-z0-9_]*\)=.*/\${\1}/p" | tr "\n" " ")
  for t in /etc/nginx/templates/*.template; do
    [ -f "$t" ] || continue
    name=$(basename "$t" .template); mkdir -p "$out"
    envsubst "$vars" <"$t" >"$out/$name"
  done
fi
exec "$@"
SH
chmod +x "$ctx/entrypoint.sh"' <<'CF'
FROM docker.io/library/debian:bookworm-slim
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends nginx-light libnginx-mod-stream gettext-base >/dev/null \
 && rm -rf /var/lib/apt/lists/* \
 && ln -sf /dev/stdout /var/log/nginx/access.log && ln -sf /dev/stderr /var/log/nginx/error.log
COPY entrypoint.sh /docker-entrypoint.sh
ENTRYPOINT ["/docker-entrypoint.sh"]
# The official image has the stream module built in; Debian's is a loadable module.
CMD ["nginx", "-g", "daemon off; load_module /usr/lib/nginx/modules/ngx_stream_module.so;"]
STOPSIGNAL SIGQUIT
EXPOSE 80
CF

podman images --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -E 'library/(debian|node|postgres|redis|nginx):' | sed 's/^/stand-in ready: /' >&2
