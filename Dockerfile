# One image for every hcs-testbed service (mock-hcs, the scenario runner).
# Built from the lock file; TypeScript runs through tsx, no build step.
FROM node:20-bookworm-slim
# The real kubectl, for scenario steps with `real: true` (src/scenario/real-kubectl.ts looks at /usr/bin/kubectl).
ARG KUBECTL_VERSION=v1.33.1
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl \
 && curl -fsSLo /usr/bin/kubectl "https://dl.k8s.io/release/${KUBECTL_VERSION}/bin/linux/$(dpkg --print-architecture)/kubectl" \
 && chmod +x /usr/bin/kubectl \
 && apt-get purge -y curl && apt-get autoremove -y && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
ENV NODE_ENV=production
# Default: replay the scenario library on the embedded management cluster.
CMD ["npm", "run", "scenarios", "--", "--report", "console,junit,json,html", "--out", "/out"]
