package cmdutil

import "fmt"

// PrintRecords writes rows as PrintList does (--where, --order, --select, paging), except that
// text output is one record after another in PrintItem's form instead of a table: for records
// whose values a table cell would cut, such as presigned URLs.
func (s *IOStreams) PrintRecords(rows any, cols []Column, o *ListOptions) error {
	if s.JSON() {
		return s.PrintList(rows, cols, o)
	}
	records, err := toRecords(rows)
	if err != nil {
		return err
	}
	if records, err = o.apply(records); err != nil {
		return err
	}
	if len(o.Select) > 0 {
		cols = Cols(o.Select...)
	}
	if len(records) == 0 {
		s.Infof("no results")
		return nil
	}
	for i, r := range records {
		if i > 0 {
			fmt.Fprintln(s.Out)
		}
		if err := s.PrintItem(r, cols); err != nil {
			return err
		}
	}
	return nil
}
