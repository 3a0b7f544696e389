import os


def post_worker_init(worker):
    with open('/tmp/acceptlab-peer-gunicorn-sync-u0ygqcb8/up.pids', "a") as f:
        f.write("%d\n" % os.getpid())
