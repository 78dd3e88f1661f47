# The service's image, used by docker-compose.yml. Migrations run at start-up.
FROM node:20-bookworm-slim
WORKDIR /app
# sqlite3 (the embedded default) compiles from source when no prebuilt binary fits.
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --omit=dev
COPY . .
ENV NODE_ENV=production PORT=3000 HOST=0.0.0.0
EXPOSE 3000
USER node
CMD ["npm", "start"]
