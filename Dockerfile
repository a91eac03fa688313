# One image for every hcs-testbed service (mock-hcs, the scenario runner).
# Built from the lock file; TypeScript runs through tsx, no build step.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
ENV NODE_ENV=production
# Default: replay the scenario library on the embedded management cluster.
CMD ["npm", "run", "scenarios", "--", "--report", "console,junit,json,html", "--out", "/out"]
