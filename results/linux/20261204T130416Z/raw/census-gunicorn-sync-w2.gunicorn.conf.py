import os


def post_worker_init(worker):
    with open('/tmp/acceptlab-peer-gunicorn-sync-a_v5yv47/up.pids', "a") as f:
        f.write("%d\n" % os.getpid())
