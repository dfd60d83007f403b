package engine

// GetItem: one item by its key, projected.

type getItemInput struct {
	TableName                string
	Key                      attrMap
	ProjectionExpression     string
	ExpressionAttributeNames map[string]string
	ConsistentRead           bool
	ReturnConsumedCapacity   string
}

func (e *Engine) getItem(in *getItemInput) ([]byte, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	t, err := e.table(in.TableName)
	if err != nil {
		return nil, err
	}
	x := exprs{names: in.ExpressionAttributeNames, proj: &projCache{}}
	if err := x.check(in.ProjectionExpression); err != nil {
		return nil, err
	}
	k, err := keyOf(t.key, in.Key, true)
	if err != nil {
		return nil, err
	}
	b := []byte(`{`)
	it := t.get(k)
	if it != nil {
		raw, err := x.projected(in.ProjectionExpression, it)
		if err != nil {
			return nil, err
		}
		b = append(append(b, `"Item":`...), raw...)
	}
	b = append(b, '}')
	if wantsCapacity(in.ReturnConsumedCapacity) {
		b = withCapacity(b, capacity{t.name: blocks(sizeOf(it), 4096) * readFactor(in.ConsistentRead)}, true)
	}
	return b, nil
}

// projected is an item's JSON as a projection expression leaves it.
func (x exprs) projected(p string, it *item) ([]byte, error) {
	if p == "" {
		return it.raw, nil
	}
	a, err := it.decode()
	if err != nil {
		return nil, err
	}
	if a, err = x.project(p, a); err != nil {
		return nil, err
	}
	return encodeItem(a), nil
}
