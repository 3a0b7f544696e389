import os


def post_worker_init(worker):
    with open('/tmp/acceptlab-peer-gunicorn-sync-4dg5wj4f/up.pids', "a") as f:
        f.write("%d\n" % os.getpid())
