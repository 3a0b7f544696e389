import os


def post_worker_init(worker):
    with open('/tmp/acceptlab-peer-gunicorn-reuse-port-qet74a_q/up.pids', "a") as f:
        f.write("%d\n" % os.getpid())
