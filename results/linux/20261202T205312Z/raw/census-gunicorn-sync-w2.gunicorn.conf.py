import os


def post_worker_init(worker):
    with open('/tmp/acceptlab-peer-gunicorn-sync-qk_ctzl1/up.pids', "a") as f:
        f.write("%d\n" % os.getpid())
