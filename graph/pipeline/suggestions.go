package pipeline

import (
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/vektah/gqlparser/v2/validator/core"
	"github.com/vektah/gqlparser/v2/validator/rules"
)

// withoutSuggestions are gqlparser's validation rules that add "Did you
// mean …?" to their messages, each with its variant that does not: the
// names of fields and types (FieldsOnCorrectType, KnownTypeNames), of
// arguments (KnownArgumentNames), of enum values and input fields
// (ValuesOfCorrectType), and a selection to add (ScalarLeafs). gqlparser
// makes no other suggestion (its variable coercion, validator/vars.go,
// names none), nor does strict coercion (coercion.go).
var withoutSuggestions = []struct{ with, without core.Rule }{
	{rules.FieldsOnCorrectTypeRule, rules.FieldsOnCorrectTypeRuleWithoutSuggestions},
	{rules.KnownArgumentNamesRule, rules.KnownArgumentNamesRuleWithoutSuggestions},
	{rules.KnownTypeNamesRule, rules.KnownTypeNamesRuleWithoutSuggestions},
	{rules.ValuesOfCorrectTypeRule, rules.ValuesOfCorrectTypeRuleWithoutSuggestions},
	{rules.ScalarLeafsRule, rules.ScalarLeafsRuleWithoutSuggestions},
}

// noSuggestions makes srv's validation suggest no name: production's, where
// introspection is off and a suggestion would name what a client may not
// look up (an argument, an enum value, an input field), so that anyone with
// a token could map the schema by misspelling. Validation is gqlgen's one
// step for every transport, so this holds on each. Outside production the
// suggestions stay: introspection shows everything anyway.
func noSuggestions(srv *handler.Server) {
	// gqlgen swaps two of the rules itself after the rules function, by
	// this setting: left false, it would put their suggestions back.
	srv.SetDisableSuggestion(true)
	srv.SetValidationRulesFn(rulesWithoutSuggestions)
}

// rulesWithoutSuggestions is gqlparser's default rule set with every rule
// of withoutSuggestions replaced by its variant without suggestions.
func rulesWithoutSuggestions() *rules.Rules {
	r := rules.NewDefaultRules()
	for _, w := range withoutSuggestions {
		r.RemoveRule(w.with.Name)
		r.AddRule(w.without.Name, w.without.RuleFunc)
	}
	return r
}
