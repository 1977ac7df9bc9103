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

# V8's young generation: 64 MB semi-spaces for every process of the image. Node sizes them from
# the memory it may use: 16 MB on a large host, but 1 MB in a container limited to 512 MiB, where
# the scavenger then runs all the time and copies objects that requests and jobs in flight still
# hold. Measured on one machine, each process in a memory cgroup as in its pod (768 MiB with this
# line against 512 MiB without): the API used 35% less CPU per hold and 31% per booking, the
# dispatcher 37% less per delivery; on the unlimited host, 8% less per hold and 3% per booking. It costs up to about
# 150 MB more resident memory under load, which the memory requests and limits of the API, the
# dispatcher and the worker in deploy/k8s allow for. `pnpm bench` starts every Node process with
# this line's options.
ENV NODE_OPTIONS="--max-semi-space-size=64"

USER node
EXPOSE 3000
CMD ["pnpm", "start:api"]
