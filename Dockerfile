# One image for the three services; docker-compose.yml picks the command (`pnpm start:api`,
# `pnpm start:dispatcher` or `pnpm start:worker`). TypeScript runs through tsx, so there is no
# build step.
FROM node:20-slim

RUN npm install -g pnpm@10.34.8 && npm cache clean --force

ENV NPM_CONFIG_UPDATE_NOTIFIER=false
WORKDIR /app

# The whole source goes in before `pnpm install`: its postinstall runs `prisma generate`, which
# needs prisma/schema.prisma and writes packages/db/src/generated (excluded by .dockerignore).
# Copying only the manifests first would cache better but would silently miss new workspace
# packages.
COPY . .
RUN pnpm install --frozen-lockfile && pnpm store prune

# V8's young generation: 64 MB semi-spaces for every process of the image, where Node would give
# 1-4 MB in a pod of 512-768 MiB and the scavenger would run all the time. What it buys and costs,
# measured, is in docs/running-at-scale.md; deploy/k8s's memory limits allow for it. test-kit's
# imageNodeOptions reads this line for the bench and the Kubernetes process test: keep its form.
ENV NODE_OPTIONS="--max-semi-space-size=64"

USER node
EXPOSE 3000
CMD ["pnpm", "start:api"]
