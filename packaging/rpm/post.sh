# schedhost %post: the system user the service runs as, then systemd learns of the unit.
# $1 is the number of installed versions after this one (1: install, 2: upgrade).
if ! getent passwd schedhost >/dev/null; then
  useradd --system --user-group --no-create-home --home-dir /var/lib/schedhost \
    --shell /sbin/nologin --comment "schedhost scheduling daemon" schedhost
fi
if [ "$1" -eq 1 ]; then
  # First install: the config may name TLS keys, so root and the service group only.
  chgrp schedhost /etc/schedhost/schedhost.toml
  chmod 0640 /etc/schedhost/schedhost.toml
fi
if [ -d /run/systemd/system ]; then
  systemctl --system daemon-reload >/dev/null 2>&1 || :
  if [ "$1" -ge 2 ]; then
    systemctl try-restart schedhost.service >/dev/null 2>&1 || :
  fi
fi
