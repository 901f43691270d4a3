# syntax=docker/dockerfile:1
# Build stage: install all dependencies and compile TypeScript.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY vendor ./vendor
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY apps ./apps
COPY libs ./libs
COPY migrations ./migrations
COPY scripts ./scripts
COPY test ./test
COPY bench ./bench
# The tests and benchmarks are compiled with the rest (one tsconfig) but not shipped.
RUN npm run build && rm -rf dist/test dist/bench

# Production dependencies, pruned to what the server loads: scripts/prune-runtime-modules.mjs lets esbuild follow
# every import from dist/ and keeps only the node_modules files it reaches (with each package.json and licence),
# and drops dist/'s source maps; then imports every module of dist/ (the build fails if one is missing).
# Without the optional dependencies: they are the embedded PostgreSQL's binaries (60 MB), and the image needs
# DATABASE_URL (as docker-compose.yml sets it). esbuild comes from the build stage.
FROM node:20-bookworm-slim AS modules
WORKDIR /app
COPY package.json package-lock.json ./
COPY vendor ./vendor
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund
COPY --from=build /app/node_modules/esbuild /tools/node_modules/esbuild
COPY --from=build /app/node_modules/@esbuild /tools/node_modules/@esbuild
COPY scripts/prune-runtime-modules.mjs /tools/
COPY --from=build /app/dist ./dist
RUN node /tools/prune-runtime-modules.mjs /app

# Runtime stage: Debian with only the Node binary (no npm, no build tools), non-root user `node` (uid 1000, as in
# the node images), the pruned modules and the compiled server.
FROM debian:bookworm-slim AS runtime
COPY --from=modules /usr/local/bin/node /usr/local/bin/node
# The data folder (CA, certificates, kubeconfig) belongs to the runtime user; a named volume inherits it.
RUN groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home --no-log-init node \
 && mkdir -p /data && chown node:node /data
ENV NODE_ENV=production HOST=0.0.0.0 PORT=6443 PLINTH_DATA_DIR=/data
WORKDIR /app
COPY package.json ./
COPY vendor ./vendor
COPY --from=modules /app/node_modules ./node_modules
COPY --from=modules /app/dist ./dist
USER node
EXPOSE 6443
CMD ["node", "dist/apps/api/src/main.js"]
