# schedhost %preun: stop and disable the daemon when the package is erased (not on upgrade).
if [ "$1" -eq 0 ] && [ -d /run/systemd/system ]; then
  systemctl --no-reload disable --now schedhost.service >/dev/null 2>&1 || :
fi
