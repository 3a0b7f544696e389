import os


def post_worker_init(worker):
    with open('/tmp/acceptlab-peer-gunicorn-reuse-port-yc_le8zi/up.pids', "a") as f:
        f.write("%d\n" % os.getpid())
