import os


def post_worker_init(worker):
    with open('/tmp/acceptlab-peer-gunicorn-reuse-port-76q4d8ra/up.pids', "a") as f:
        f.write("%d\n" % os.getpid())
