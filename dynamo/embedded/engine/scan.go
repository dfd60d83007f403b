package engine

// Scan: a table's or an index's items in key order, a page at a time.

func (e *Engine) scan(in *queryInput) ([]byte, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	t, err := e.table(in.TableName)
	if err != nil {
		return nil, err
	}
	if in.TotalSegments != nil && *in.TotalSegments > 1 {
		return nil, validation("the embedded store scans in one segment")
	}
	s, err := t.source(in.IndexName, in.ConsistentRead)
	if err != nil {
		return nil, err
	}
	x := exprs{names: in.ExpressionAttributeNames, values: in.ExpressionAttributeValues, proj: &projCache{}}
	if err := x.check(in.FilterExpression, in.ProjectionExpression); err != nil {
		return nil, err
	}
	p, err := e.newPage(x, s, in.IndexName, in.FilterExpression, in.ProjectionExpression, in.Select, in.Limit)
	if err != nil {
		return nil, err
	}
	esk, err := s.startKey(in.ExclusiveStartKey)
	if err != nil {
		return nil, err
	}
	visit := func(en entry) bool {
		visits.Add(1)
		if esk != nil && !less(*esk, en) {
			return true
		}
		return p.take(en)
	}
	if esk != nil {
		s.tree.AscendGreaterOrEqual(*esk, visit)
	} else {
		s.tree.Ascend(visit)
	}
	return p.answer(s, in)
}
