import os


def post_worker_init(worker):
    with open('/tmp/acceptlab-peer-gunicorn-sync-4uhbh4f0/up.pids', "a") as f:
        f.write("%d\n" % os.getpid())
