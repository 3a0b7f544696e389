import os


def post_worker_init(worker):
    with open('/tmp/acceptlab-peer-gunicorn-sync-u32uyg01/up.pids', "a") as f:
        f.write("%d\n" % os.getpid())
