// acceptlab peer: a Node.js cluster (no npm packages) whose 2 workers answer
// every request with their process.pid. The scheduling policy comes from
// NODE_CLUSTER_SCHED_POLICY (rr: the primary accepts and hands each
// connection to a worker round-robin; none: every worker accepts on the
// shared listener, the kernel decides). Usage: node cluster.js PORT [WORKERS]
// Prints one JSON line once every worker listens:
//   {"event":"ready","port":P,"primary":PID,"policy":"rr"|"none","pids":[...]}
// SIGTERM: the primary kills its workers, reaps them and exits 0.
'use strict';
const cluster = require('cluster');
const http = require('http');

const port = parseInt(process.argv[2], 10);
const count = parseInt(process.argv[3] || '2', 10);

if (cluster.isPrimary) {
  const pids = [];
  let listening = 0;
  let stopping = false;
  for (let i = 0; i < count; i++) {
    const w = cluster.fork();
    w.on('listening', () => {
      pids[i] = w.process.pid;
      if (++listening === count) {
        const policy = cluster.schedulingPolicy === cluster.SCHED_RR ? 'rr' : 'none';
        process.stdout.write(JSON.stringify({ event: 'ready', port, primary: process.pid, policy, pids }) + '\n');
      }
    });
  }
  cluster.on('exit', (w, code, signal) => {
    if (!stopping) {
      process.stdout.write(JSON.stringify({ event: 'worker_exit', pid: w.process.pid, code, signal }) + '\n');
      process.exit(1);
    }
    if (Object.keys(cluster.workers).length === 0) process.exit(0);
  });
  const stop = () => {
    if (stopping) return;
    stopping = true;
    if (Object.keys(cluster.workers).length === 0) process.exit(0);
    // the workers are reaped by the primary (their 'exit'), then it exits
    for (const id in cluster.workers) cluster.workers[id].process.kill('SIGKILL');
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
} else {
  const server = http.createServer((req, res) => {
    const body = process.pid + '\n';
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  });
  server.keepAliveTimeout = 30000;
  server.listen(port, '127.0.0.1');
}
