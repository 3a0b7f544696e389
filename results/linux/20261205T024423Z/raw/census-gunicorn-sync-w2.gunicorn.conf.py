import os


def post_worker_init(worker):
    with open('/tmp/acceptlab-peer-gunicorn-sync-n9t_df14/up.pids', "a") as f:
        f.write("%d\n" % os.getpid())
