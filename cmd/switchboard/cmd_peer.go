package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"switchboard/engine/runtime"
	"switchboard/providers/peer"
)

// peerCommand is `switchboard peer`: the peer identity (docs/runtime.md, "Provider kind").
func (a *app) peerCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "peer",
		Short: "Peer identity: write a key, print a peer id",
	}
	cmd.AddCommand(a.peerKeygenCommand(), a.peerIDCommand())
	return cmd
}

// peerKeygenCommand is `peer keygen FILE`: a new Ed25519 identity, never over an existing file.
func (a *app) peerKeygenCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "keygen FILE",
		Short: "Write a new Ed25519 peer identity key (mode 0600) and print its peer id",
		Args:  exactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			path := args[0]
			if err := peer.Keygen(path); err != nil {
				if errors.Is(err, peer.ErrKeyExists) {
					return refused("peer.key-exists", path, "the key file exists already; an identity is never overwritten")
				}
				return environment("peer.key-unwritable", path, err)
			}
			id, err := peer.IDFromKeyFile(path)
			if err != nil {
				return environment("peer.key-unreadable", path, err)
			}
			if a.json() {
				return a.printJSON(map[string]any{"ok": true, "file": path, "peerId": id})
			}
			fmt.Fprintf(a.stdout, "wrote %s\npeer id: %s\n", path, id)
			return nil
		},
	}
}

// peerIDCommand is `peer id`: the peer id of the runtime file's peer provider.
func (a *app) peerIDCommand() *cobra.Command {
	var provider string
	cmd := &cobra.Command{
		Use:   "id [--provider ID]",
		Short: "Print the peer id of the runtime file's peer provider (--config required)",
		Args:  exactArgs(0),
		RunE: func(*cobra.Command, []string) error {
			if a.config == "" {
				return usageError(errors.New("give the runtime file with --config or SWITCHBOARD_CONFIG"))
			}
			rt, err := runtime.Load(a.config, a.getenv)
			if err != nil {
				return err
			}
			p, err := peerProviderOf(rt, provider)
			if err != nil {
				return err
			}
			id, err := peer.IDFromKey(p.Peer.IdentityKey.Value())
			if err != nil {
				return refused("peer.key-invalid", p.Peer.IdentityKey.Ref(), err.Error())
			}
			if a.json() {
				return a.printJSON(map[string]any{"ok": true, "provider": p.ID, "peerId": id})
			}
			fmt.Fprintln(a.stdout, id)
			return nil
		},
	}
	cmd.Flags().StringVar(&provider, "provider", "", "the peer provider's id (needed when the runtime file has several)")
	return cmd
}

// peerProviderOf picks the peer provider named id, or the only one when id is empty.
func peerProviderOf(rt *runtime.Runtime, id string) (*runtime.ProviderConfig, error) {
	var ids []string
	for pid, p := range rt.Providers {
		if p.Kind == runtime.KindPeer && p.Peer != nil {
			ids = append(ids, pid)
		}
	}
	slices.Sort(ids)
	switch {
	case id != "":
		if !slices.Contains(ids, id) {
			return nil, refused("peer.provider-unknown", rt.Path,
				fmt.Sprintf("the runtime file has no peer provider %q (peer providers: %s)", id, listOrNone(ids)))
		}
		return rt.Providers[id], nil
	case len(ids) == 0:
		return nil, refused("peer.provider-missing", rt.Path, "the runtime file has no peer provider")
	case len(ids) > 1:
		return nil, usageError(fmt.Errorf("the runtime file has several peer providers: choose one with --provider (%s)", strings.Join(ids, ", ")))
	}
	return rt.Providers[ids[0]], nil
}

// listOrNone joins ids, or says there are none.
func listOrNone(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}
