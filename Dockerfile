# One image for every hcs-testbed service (mock-hcs, the scenario runner, the
# HCS provider as a Deployment in kind).
# Built from the lock file; TypeScript runs through tsx, no build step.
#
# BASE_IMAGE: any image with Node.js >= 20 and npm. The default is the
# official one; where no container registry is reachable,
# tools/docker/base-image.sh builds hcs-testbed/node-base from Debian's
# packages (debootstrap) and the build uses it:
#   docker build --build-arg BASE_IMAGE=hcs-testbed/node-base:trixie --build-arg KUBECTL_SOURCE=context .
ARG BASE_IMAGE=node:20-bookworm-slim
FROM ${BASE_IMAGE}
# The real kubectl, for scenario steps with `real: true` (src/harness/scenario/real-kubectl.ts
# looks at /usr/bin/kubectl). KUBECTL_SOURCE=download fetches the release binary;
# KUBECTL_SOURCE=context takes .kubectl/kubectl from the build context (e.g. the
# one tools/kind/build.sh built from the Go module proxy; tools/kind/ci-step.sh puts it there).
ARG KUBECTL_VERSION=v1.33.1
ARG KUBECTL_SOURCE=download
COPY package.json .kubectl* /tmp/kubectl-context/
RUN if [ "$KUBECTL_SOURCE" = context ]; then \
      install -m 0755 /tmp/kubectl-context/kubectl /usr/bin/kubectl; \
    else \
      apt-get update \
      && apt-get install -y --no-install-recommends ca-certificates curl \
      && curl -fsSLo /usr/bin/kubectl "https://dl.k8s.io/release/${KUBECTL_VERSION}/bin/linux/$(dpkg --print-architecture)/kubectl" \
      && chmod +x /usr/bin/kubectl \
      && apt-get purge -y curl && apt-get autoremove -y && rm -rf /var/lib/apt/lists/*; \
    fi \
 && rm -rf /tmp/kubectl-context
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
ENV NODE_ENV=production
# Default: replay the scenario library on the embedded management cluster.
CMD ["npm", "run", "scenarios", "--", "--report", "console,junit,json,html", "--out", "/out"]
