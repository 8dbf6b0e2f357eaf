package peer

import "switchboard/scripting"

// Entry points of a peer adapter.
var (
	peerAdapterRequired = []string{"prepare"}
	peerAdapterOptional = []string{"interpret"}
)

// CompileAdapter compiles a peer adapter exactly as New does (prepare required, interpret
// optional, limits lowered from scripting.DefaultLimits), then drops it. `switchboard check`
// calls it for every peer provider that carries an adapter.
func CompileAdapter(name, source string, limits scripting.Limits) error {
	p, err := scripting.Compile(name, source, peerAdapterRequired, peerAdapterOptional, scripting.DefaultLimits().Lower(limits), nil)
	if err != nil {
		return err
	}
	p.Close()
	return nil
}
