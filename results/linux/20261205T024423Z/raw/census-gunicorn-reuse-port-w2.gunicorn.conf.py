import os


def post_worker_init(worker):
    with open('/tmp/acceptlab-peer-gunicorn-reuse-port-rc8mymv1/up.pids', "a") as f:
        f.write("%d\n" % os.getpid())
