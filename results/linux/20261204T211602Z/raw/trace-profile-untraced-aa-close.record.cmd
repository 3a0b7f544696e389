/usr/bin/perf record -e cpu-clock -F 4999 -o /work/main/results/linux/20261204T211602Z/raw/trace-profile-untraced-aa-close.perf.data -p 31870,31871
