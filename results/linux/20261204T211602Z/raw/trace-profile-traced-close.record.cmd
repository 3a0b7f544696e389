/usr/bin/perf record -e cpu-clock -F 4999 -o /work/main/results/linux/20261204T211602Z/raw/trace-profile-traced-close.perf.data -p 31883,31884
