import os


def post_worker_init(worker):
    with open('/tmp/acceptlab-peer-gunicorn-sync-4__gbmpd/up.pids', "a") as f:
        f.write("%d\n" % os.getpid())
