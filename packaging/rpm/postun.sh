# schedhost %postun: systemd forgets the unit. The user and /var/lib/schedhost stay (Fedora's
# policy: never remove a system user; state is the operator's).
if [ -d /run/systemd/system ]; then
  systemctl --system daemon-reload >/dev/null 2>&1 || :
fi
