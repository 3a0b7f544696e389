/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261205T004404Z/raw/profile-bare.perf.data -p 4056,4057
