/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261204T211602Z/raw/profile-bare.perf.data -p 31944,31945
