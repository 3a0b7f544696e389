import os


def post_worker_init(worker):
    with open('/tmp/acceptlab-peer-gunicorn-sync-7ln_c3qb/up.pids', "a") as f:
        f.write("%d\n" % os.getpid())
