import os


def post_worker_init(worker):
    with open('/tmp/acceptlab-peer-gunicorn-reuse-port-v2a90w2u/up.pids', "a") as f:
        f.write("%d\n" % os.getpid())
