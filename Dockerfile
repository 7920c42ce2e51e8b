# One image for every process role (ROLE=api|projector|worker|all); see README
# "Running on EventStoreDB + MongoDB with process roles".
FROM node:20-bookworm
WORKDIR /app
COPY package.json package-lock.json ./
# better-sqlite3 builds here if no prebuilt binary fits (the image has python3, make and g++).
RUN npm ci --omit=dev && npm cache clean --force
COPY . .
ENV NODE_ENV=production PORT=8080 HOST=0.0.0.0 DATA_DIR=/data
RUN mkdir -p /data && chown node:node /data && chmod 700 /data
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/health/live').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# The heap is sized from the container's memory limit (api/heap-limit.ts) unless NODE_OPTIONS sets
# --max-old-space-size; the shell execs node, which stays PID 1 and gets the stop signal itself.
CMD ["sh", "-c", "exec node $(node --import tsx api/heap-limit.ts) --import tsx api/server.ts"]
