import os


def post_worker_init(worker):
    with open('/tmp/acceptlab-peer-gunicorn-sync-9bw6b51x/up.pids', "a") as f:
        f.write("%d\n" % os.getpid())
