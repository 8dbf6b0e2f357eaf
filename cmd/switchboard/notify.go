package main

import (
	"log/slog"

	"github.com/coreos/go-systemd/v22/daemon"
)

// notifyService tells a service manager that watches NOTIFY_SOCKET (systemd's Type=notify,
// deploy/switchboard.service) how serve is doing: daemon.SdNotifyReady once the database is
// migrated and every listener bound, daemon.SdNotifyStopping when a graceful stop begins. It
// does nothing without NOTIFY_SOCKET; a failed send is logged and serving goes on.
func notifyService(log *slog.Logger, state string) {
	if _, err := daemon.SdNotify(false, state); err != nil {
		log.Warn("cannot tell the service manager", "state", state, "err", err)
	}
}
