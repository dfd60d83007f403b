package engine

import "sort"

// CreateTable, DescribeTable, DeleteTable and ListTables: the tables,
// their key schemas and global secondary indexes, and their description
// as DynamoDB gives it.

// attrDef is one AttributeDefinition.
type attrDef struct {
	AttributeName string
	AttributeType string
}

type keyElem struct {
	AttributeName string
	KeyType       string
}

type gsiDef struct {
	IndexName             string
	KeySchema             []keyElem
	Projection            gsiProjection
	ProvisionedThroughput any `json:",omitempty"`
}

type createTableInput struct {
	TableName              string
	AttributeDefinitions   []attrDef
	KeySchema              []keyElem
	GlobalSecondaryIndexes []gsiDef
	LocalSecondaryIndexes  []any
	BillingMode            string
}

// schemaOf makes a key schema of KeySchema elements and the attribute
// definitions.
func schemaOf(elems []keyElem, defs []attrDef) (schema, error) {
	var s schema
	typeOf := func(n string) (string, error) {
		for _, d := range defs {
			if d.AttributeName == n {
				if d.AttributeType != "S" && d.AttributeType != "B" {
					return "", validation("the embedded store supports key attributes of type S and B, not %s (%s)", d.AttributeType, n)
				}
				return d.AttributeType, nil
			}
		}
		return "", validation("One or more parameter values were invalid: Some index key attributes are not defined in AttributeDefinitions. Keys: [%s]", n)
	}
	for _, el := range elems {
		typ, err := typeOf(el.AttributeName)
		if err != nil {
			return s, err
		}
		switch {
		case el.KeyType == "HASH" && s.hash.name == "":
			s.hash = keyAttr{el.AttributeName, typ}
		case el.KeyType == "RANGE" && s.rng.name == "":
			s.rng = keyAttr{el.AttributeName, typ}
		default:
			return s, validation("Invalid KeySchema: %s", el.KeyType)
		}
	}
	if s.hash.name == "" {
		return s, validation("Invalid KeySchema: no HASH key")
	}
	return s, nil
}

func (e *Engine) createTable(in *createTableInput) (any, error) {
	if in.TableName == "" {
		return nil, validation("TableName must not be empty")
	}
	if len(in.LocalSecondaryIndexes) > 0 {
		return nil, validation("the embedded store has no local secondary indexes")
	}
	key, err := schemaOf(in.KeySchema, in.AttributeDefinitions)
	if err != nil {
		return nil, err
	}
	t := &table{name: in.TableName, key: key, items: newTree(), created: e.now(), defs: in.AttributeDefinitions, billing: in.BillingMode}
	for _, g := range in.GlobalSecondaryIndexes {
		k, err := schemaOf(g.KeySchema, in.AttributeDefinitions)
		if err != nil {
			return nil, err
		}
		if _, _, err := t.index(g.IndexName); err == nil {
			return nil, validation("Duplicate index name: %s", g.IndexName)
		}
		ix, err := newIndex(&g, k, key)
		if err != nil {
			return nil, err
		}
		t.indexes = append(t.indexes, ix)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.tables[in.TableName] != nil {
		return nil, &Error{Code: "ResourceInUseException", Message: "Cannot create preexisting table"}
	}
	e.tables[in.TableName] = t
	return map[string]any{"TableDescription": t.describe()}, nil
}

func (e *Engine) describeTable(name string) (any, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	t, err := e.table(name)
	if err != nil {
		return nil, err
	}
	return map[string]any{"Table": t.describe()}, nil
}

func (e *Engine) deleteTable(name string) (any, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	t, err := e.table(name)
	if err != nil {
		return nil, err
	}
	delete(e.tables, name)
	d := t.describe()
	d["TableStatus"] = "DELETING"
	return map[string]any{"TableDescription": d}, nil
}

func (e *Engine) listTables() (any, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	names := make([]string, 0, len(e.tables))
	for n := range e.tables {
		names = append(names, n)
	}
	sort.Strings(names)
	return map[string]any{"TableNames": names}, nil
}

// describe is the table's TableDescription.
func (t *table) describe() map[string]any {
	ks := func(s schema) []keyElem {
		out := []keyElem{{s.hash.name, "HASH"}}
		if s.rng.name != "" {
			out = append(out, keyElem{s.rng.name, "RANGE"})
		}
		return out
	}
	d := map[string]any{
		"TableName":            t.name,
		"TableStatus":          "ACTIVE",
		"TableArn":             "arn:aws:dynamodb:local:000000000000:table/" + t.name,
		"KeySchema":            ks(t.key),
		"AttributeDefinitions": t.defs,
		"ItemCount":            t.items.Len(),
		"TableSizeBytes":       t.bytes,
		"CreationDateTime":     float64(t.created.UnixMilli()) / 1000,
	}
	if t.billing != "" {
		d["BillingModeSummary"] = map[string]string{"BillingMode": t.billing}
	}
	if len(t.indexes) > 0 {
		var gs []map[string]any
		for _, ix := range t.indexes {
			gs = append(gs, map[string]any{"IndexName": ix.name, "KeySchema": ks(ix.key), "IndexStatus": "ACTIVE",
				"Projection": ix.describeProjection(), "ItemCount": ix.items.Len(),
				"IndexArn": "arn:aws:dynamodb:local:000000000000:table/" + t.name + "/index/" + ix.name})
		}
		d["GlobalSecondaryIndexes"] = gs
	}
	return d
}
