import os


def post_worker_init(worker):
    with open('/tmp/acceptlab-peer-gunicorn-sync-rh0dil8h/up.pids', "a") as f:
        f.write("%d\n" % os.getpid())
