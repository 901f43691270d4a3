# syntax=docker/dockerfile:1
# Build stage: install all dependencies and compile TypeScript.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY apps ./apps
COPY libs ./libs
COPY migrations ./migrations
COPY scripts ./scripts
COPY test ./test
COPY bench ./bench
RUN npm run build

# Runtime stage: production dependencies only, non-root user.
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production HOST=0.0.0.0 PORT=6443 PLINTH_DATA_DIR=/data
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force
COPY --from=build /app/dist ./dist
# The data folder (CA, certificates, kubeconfig) belongs to the runtime user; a named volume inherits it.
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 6443
CMD ["node", "dist/apps/api/src/main.js"]
