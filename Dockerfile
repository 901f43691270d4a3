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

# Runtime stage: production dependencies only, non-root user. Without the optional ones: they are the
# embedded PostgreSQL's binaries (60 MB), and the image needs DATABASE_URL (as docker-compose.yml sets it).
# Type declarations, source maps and read-mes are dropped too: nothing runs them.
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production HOST=0.0.0.0 PORT=6443 PLINTH_DATA_DIR=/data
WORKDIR /app
COPY package.json package-lock.json ./
COPY vendor ./vendor
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund && npm cache clean --force \
 && find node_modules \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' -o -iname 'README*' -o -iname 'CHANGELOG*' \) -type f -delete
COPY --from=build /app/dist ./dist
# The data folder (CA, certificates, kubeconfig) belongs to the runtime user; a named volume inherits it.
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 6443
CMD ["node", "dist/apps/api/src/main.js"]
