/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261202T205312Z/raw/profile-bare.perf.data -p 652,653
