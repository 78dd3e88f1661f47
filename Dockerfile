# The service's image (docker-compose.yml builds it). Two stages: the first has the compilers
# (sqlite3's native binding is built from source), every dependency and tsc; the second has
# Node, the production dependencies with that compiled binding, dist/ (the dashboard's files
# too) and db/ only.
# Node 24 LTS: the line package.json's engines names and CI runs the suite on (.ci/run).
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
COPY web ./web
# The build generates the OpenAPI document and the REST client's types (generated/, from src/
# through tsx and openapi-typescript, dev dependencies) before it compiles; the runtime stage needs
# neither: the server makes the document it serves, and dist/client has the types' copy.
RUN npm run build && npm prune --omit=dev --ignore-scripts --no-audit --no-fund

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production PORT=3000 HOST=0.0.0.0
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY db ./db
# The embedded database's directory (DATABASE_URL defaults to sqlite:data/service.sqlite),
# writable by the unprivileged user the server runs as; mount a volume to keep it.
RUN mkdir -p /app/data && chown node:node /app/data
VOLUME ["/app/data"]
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node itself is PID 1 (no npm, no shell), so SIGTERM from `docker stop` reaches the server's
# graceful shutdown, which takes up to SHUTDOWN_TIMEOUT_SECONDS (25): give `docker stop -t 30`.
STOPSIGNAL SIGTERM
CMD ["node", "dist/server.js"]
