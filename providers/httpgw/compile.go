package httpgw

import (
	"fmt"
	"log/slog"

	"switchboard/scripting"
)

// Entry points of an http adapter. callback (receipts and inbound messages together) may stand
// in for receipt.
var (
	adapterRequired = []string{"prepare"}
	adapterOptional = []string{"interpret", "receipt", "callback"}
)

// CompileAdapter compiles an adapter exactly as New does, then drops it: the script must
// compile within limits (lowered from scripting.DefaultLimits), its top-level code must run,
// prepare must be a function, and with receiptsCallback it must define receipt or callback.
// The error names the script as name:LINE:COLUMN when the script itself is at fault (a syntax
// error, or top-level code that throws). `switchboard check` calls it for every adapter.
func CompileAdapter(name, source string, receiptsCallback bool, limits scripting.Limits) error {
	p, err := compileAdapter(name, source, receiptsCallback, limits, nil)
	if err != nil {
		return err
	}
	p.Close()
	return nil
}

// compileAdapter is CompileAdapter keeping the program.
func compileAdapter(name, source string, receiptsCallback bool, limits scripting.Limits, logger *slog.Logger) (*scripting.Program, error) {
	p, err := scripting.Compile(name, source, adapterRequired, adapterOptional, scripting.DefaultLimits().Lower(limits), logger)
	if err != nil {
		return nil, err
	}
	if receiptsCallback && !p.Has("receipt") && !p.Has("callback") {
		p.Close()
		return nil, fmt.Errorf("%w: %s: defines neither receipt nor callback, and provider.yaml says receipts: callback",
			scripting.ErrInvalidScript, name)
	}
	return p, nil
}
