package httpgw

import (
	"fmt"

	"switchboard/engine/adapterparam"
)

// Bounds of Config.Parameters (the runtime loader applies the same rule, with line numbers).
const (
	MaxParameters     = adapterparam.MaxEntries
	MaxParameterChars = adapterparam.MaxChars
)

// parametersInput checks Config.Parameters and returns them as the profile argument carries
// them (an empty object when there are none).
func parametersInput(params map[string]string) (map[string]any, error) {
	if len(params) > MaxParameters {
		return nil, fmt.Errorf("%d entries, more than %d", len(params), MaxParameters)
	}
	out := make(map[string]any, len(params))
	for name, value := range params {
		if !adapterparam.ValidName(name) {
			return nil, fmt.Errorf("name %q is not an identifier (a letter, then letters, digits or _, at most 64)", name)
		}
		if !adapterparam.ValidValue(value) {
			return nil, fmt.Errorf("%s: the value is not UTF-8 text of at most %d characters", name, MaxParameterChars)
		}
		out[name] = value
	}
	return out, nil
}
