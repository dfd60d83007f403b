package engine

// UpdateTable: a global secondary index created on a table that holds
// items, or deleted, as DynamoDB does it. One index is created or deleted
// per call (DynamoDB's limit); the new index is filled from the items that
// carry its key attributes, in the call, so it is ACTIVE from the next
// DescribeTable on (the call's own answer says CREATING, as DynamoDB's
// does). Items whose key attribute has another type than the index's are
// left out of it, as DynamoDB's backfill leaves them.

type updateTableInput struct {
	TableName                   string
	AttributeDefinitions        []attrDef
	GlobalSecondaryIndexUpdates []struct {
		Create *gsiDef
		Delete *struct{ IndexName string }
		Update any
	}
	BillingMode string
}

func (e *Engine) updateTable(in *updateTableInput) (any, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	t, err := e.table(in.TableName)
	if err != nil {
		return nil, err
	}
	switch n := len(in.GlobalSecondaryIndexUpdates); {
	case n == 0 && in.BillingMode == "":
		return nil, validation("At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, GlobalSecondaryIndexUpdates or SSESpecification or ReplicaUpdates is required")
	case n > 1:
		return nil, &Error{Code: "LimitExceededException", Message: "Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously per table"}
	case n == 0:
		t.billing = in.BillingMode
		return map[string]any{"TableDescription": t.describe()}, nil
	}
	u := in.GlobalSecondaryIndexUpdates[0]
	switch {
	case u.Create != nil:
		if err := t.createIndex(u.Create, in.AttributeDefinitions); err != nil {
			return nil, err
		}
		d := t.describe()
		for _, g := range d["GlobalSecondaryIndexes"].([]map[string]any) {
			if g["IndexName"] == u.Create.IndexName {
				g["IndexStatus"] = "CREATING"
			}
		}
		return map[string]any{"TableDescription": d}, nil
	case u.Delete != nil:
		i, _, err := t.index(u.Delete.IndexName)
		if err != nil {
			return nil, &Error{Code: "ResourceNotFoundException", Message: "Requested resource not found"}
		}
		t.dropIndex(i)
		return map[string]any{"TableDescription": t.describe()}, nil
	}
	return nil, validation("the embedded store's UpdateTable creates or deletes a global secondary index; it does not update one")
}

// createIndex adds the index def, its key attributes defined in defs, and
// fills it from the table's items.
func (t *table) createIndex(def *gsiDef, defs []attrDef) error {
	if _, _, err := t.index(def.IndexName); err == nil {
		return validation("Attempting to create an index which already exists")
	}
	all := append(append([]attrDef(nil), t.defs...), defs...)
	k, err := schemaOf(def.KeySchema, all)
	if err != nil {
		return err
	}
	for _, d := range defs { // a redefinition of a known attribute must agree
		for _, old := range t.defs {
			if old.AttributeName == d.AttributeName && old.AttributeType != d.AttributeType {
				return validation("Cannot change the type of an existing attribute definition: %s", d.AttributeName)
			}
		}
	}
	ix, err := newIndex(def, k, t.key)
	if err != nil {
		return err
	}
	n := len(t.indexes)
	t.indexes = append(t.indexes, ix)
	for _, d := range defs {
		if !t.defined(d.AttributeName) {
			t.defs = append(t.defs, d)
		}
	}
	// Each item is replaced by a copy with its key in the new index (an
	// item is never changed in place: a View may hold it).
	var its []*item
	t.items.Ascend(func(en entry) bool { its = append(its, en.it); return true })
	for _, old := range its {
		it := *old
		it.ix = append(append(make([]ikey, 0, n+1), old.ix...), ikey{})
		if a, err := old.decode(); err == nil {
			it.ix[n] = indexKey(ix, a)
		}
		t.items.ReplaceOrInsert(tableEntry(&it))
		for i, other := range t.indexes[:n] {
			if it.ix[i].ok {
				other.items.ReplaceOrInsert(indexEntry(&it, i))
			}
		}
		if it.ix[n].ok {
			ix.items.ReplaceOrInsert(indexEntry(&it, n))
		}
	}
	return nil
}

// indexKey is an item's key in ix; not ok when it lacks an attribute of
// the key or holds one of another type.
func indexKey(ix *index, a attrs) ikey {
	hv, hok := a[ix.key.hash.name]
	rv, rok := a[ix.key.rng.name]
	if !hok || (!rok && ix.key.rng.name != "") {
		return ikey{}
	}
	var k ikey
	var err error
	if k.hash, err = keyString(ix.key.hash, hv, "Index"); err != nil {
		return ikey{}
	}
	if ix.key.rng.name != "" {
		if k.rng, err = keyString(ix.key.rng, rv, "Index"); err != nil {
			return ikey{}
		}
	}
	k.ok = true
	return k
}

// dropIndex removes index i and each item's key in it.
func (t *table) dropIndex(i int) {
	var its []*item
	t.items.Ascend(func(en entry) bool { its = append(its, en.it); return true })
	t.indexes = append(t.indexes[:i:i], t.indexes[i+1:]...)
	for _, old := range its {
		it := *old
		it.ix = append(append(make([]ikey, 0, len(old.ix)-1), old.ix[:i]...), old.ix[i+1:]...)
		t.items.ReplaceOrInsert(tableEntry(&it))
		for j, ix := range t.indexes {
			if it.ix[j].ok {
				ix.items.ReplaceOrInsert(indexEntry(&it, j))
			}
		}
	}
}

func (t *table) defined(name string) bool {
	for _, d := range t.defs {
		if d.AttributeName == name {
			return true
		}
	}
	return false
}
