import os


def post_worker_init(worker):
    with open('/tmp/acceptlab-peer-gunicorn-reuse-port-w_zjf5q6/up.pids', "a") as f:
        f.write("%d\n" % os.getpid())
