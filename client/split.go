package client

import (
	"bytes"
	"context"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/hbasepb"
	"google.golang.org/protobuf/proto"
)

// Splits and merges, as HBase's Admin sends them: the master runs each as a
// procedure (SplitTableRegionProcedure, MergeTableRegionsProcedure) and the
// client waits for it to finish. A split closes the region, makes two
// daughters that read its files by reference, and replaces it with them in
// hbase:meta in one write; a merge does the same the other way. Calls for
// the old regions then fail with NotServingRegionException, which the
// client answers by reading the table's regions from hbase:meta again.

// SplitTable splits a table (HBase's Admin.split). With splitPoint nil,
// every region of the table splits at the row the server picks (the
// middle of its largest store file, HBase's best split row); a region too
// small to split, or still reading its parent's files by reference after a
// recent split or merge, fails with DoNotRetryIOException, and SplitTable
// returns the errors of all that failed after trying every region. With a
// splitPoint, the region that contains it splits there.
func (c *Client) SplitTable(ctx context.Context, table string, splitPoint []byte) error {
	defer c.regions.invalidate(table)
	if splitPoint != nil {
		if len(splitPoint) == 0 {
			return errors.New("client: split of " + table + ": empty split point")
		}
		loc, err := c.LocateRegion(ctx, table, splitPoint, true)
		if err != nil {
			return errors.Wrapf(err, "client: split of %s", table)
		}
		return c.SplitRegion(ctx, loc.Name, splitPoint)
	}
	regions, err := c.Regions(ctx, table)
	if err != nil {
		return err
	}
	var errs error
	for _, r := range regions {
		if err := c.SplitRegion(ctx, r.Name, nil); err != nil {
			errs = errors.CombineErrors(errs, err)
		}
	}
	return errs
}

// SplitRegion splits one region (HBase's Admin.splitRegion): at splitPoint,
// which must be inside the region and not its start key, or with
// splitPoint nil at the row the server picks. regionName is a
// RegionInfo's Name. It returns once the daughters serve the region's rows.
func (c *Client) SplitRegion(ctx context.Context, regionName []byte, splitPoint []byte) error {
	i := bytes.IndexByte(regionName, ',')
	if i <= 0 {
		return errors.Newf("client: split: %q is not a region name", regionName)
	}
	table := string(regionName[:i])
	defer c.regions.invalidate(table)
	var info *hbasepb.RegionInfo
	err := c.withRegionName(ctx, "split", regionName, func(loc *regionLoc) error {
		info = loc.regionInfo
		return nil
	})
	if err != nil {
		return err
	}
	if splitPoint != nil && bytes.Equal(splitPoint, info.GetStartKey()) {
		// As HBase's client: a daughter would be empty.
		return errors.Newf("client: split of %s: should not give a splitkey which equals to startkey!", regionName)
	}
	req := &hbasepb.SplitTableRegionRequest{RegionInfo: info}
	if len(splitPoint) > 0 {
		req.SplitRow = splitPoint
	}
	return c.runProcedure(ctx, "split region "+string(regionName), "SplitRegion", req, &hbasepb.SplitTableRegionResponse{})
}

// MergeRegions merges two or more regions of a table into one (HBase's
// Admin.mergeRegionsAsync, waited for). Regions are named by their names
// or their encoded names. Each must be adjacent to the one before it
// unless forcible; even forcible, they must together cover a range with no
// region left out (RegionKV keeps a table's regions tiling its rows). A
// region still reading its parent's files by reference is not mergeable
// until compacted.
func (c *Client) MergeRegions(ctx context.Context, forcible bool, regions ...[]byte) error {
	if len(regions) < 2 {
		return errors.Newf("client: Can not merge only %d region", len(regions))
	}
	req := &hbasepb.MergeTableRegionsRequest{Forcible: proto.Bool(forcible)}
	for _, name := range regions {
		enc := string(name)
		if bytes.IndexByte(name, ',') > 0 {
			if enc = encodedName(name); enc == "" {
				return errors.Newf("client: merge: %q is not a region name", name)
			}
			c.regions.invalidate(string(name[:bytes.IndexByte(name, ',')]))
		}
		req.Region = append(req.Region, &hbasepb.RegionSpecifier{Type: hbasepb.RegionSpecifier_ENCODED_REGION_NAME.Enum(),
			Value: []byte(enc)})
	}
	defer c.regions.invalidateAll()
	return c.runProcedure(ctx, "merge regions", "MergeTableRegions", req, &hbasepb.MergeTableRegionsResponse{})
}

// SetSplitEnabled turns the cluster's split switch on or off (HBase's
// Admin.splitSwitch) and returns its previous state. While it is off, no
// region splits, on request or by itself.
func (c *Client) SetSplitEnabled(ctx context.Context, on bool) (bool, error) {
	return c.setSwitch(ctx, on, hbasepb.MasterSwitchType_SPLIT)
}

// SetMergeEnabled turns the merge switch on or off (Admin.mergeSwitch) and
// returns its previous state.
func (c *Client) SetMergeEnabled(ctx context.Context, on bool) (bool, error) {
	return c.setSwitch(ctx, on, hbasepb.MasterSwitchType_MERGE)
}

// IsSplitEnabled reports whether the split switch is on
// (Admin.isSplitEnabled).
func (c *Client) IsSplitEnabled(ctx context.Context) (bool, error) {
	return c.isSwitchOn(ctx, hbasepb.MasterSwitchType_SPLIT)
}

// IsMergeEnabled reports whether the merge switch is on
// (Admin.isMergeEnabled).
func (c *Client) IsMergeEnabled(ctx context.Context) (bool, error) {
	return c.isSwitchOn(ctx, hbasepb.MasterSwitchType_MERGE)
}

func (c *Client) setSwitch(ctx context.Context, on bool, t hbasepb.MasterSwitchType) (bool, error) {
	resp := &hbasepb.SetSplitOrMergeEnabledResponse{}
	err := c.masterCall(ctx, "SetSplitOrMergeEnabled", &hbasepb.SetSplitOrMergeEnabledRequest{Enabled: proto.Bool(on),
		Synchronous: proto.Bool(true), SwitchTypes: []hbasepb.MasterSwitchType{t}}, resp)
	if err != nil {
		return false, err
	}
	if len(resp.GetPrevValue()) != 1 {
		return false, errors.Newf("client: SetSplitOrMergeEnabled answered %d previous values for one switch", len(resp.GetPrevValue()))
	}
	return resp.GetPrevValue()[0], nil
}

func (c *Client) isSwitchOn(ctx context.Context, t hbasepb.MasterSwitchType) (bool, error) {
	resp := &hbasepb.IsSplitOrMergeEnabledResponse{}
	if err := c.masterCall(ctx, "IsSplitOrMergeEnabled", &hbasepb.IsSplitOrMergeEnabledRequest{SwitchType: t.Enum()}, resp); err != nil {
		return false, err
	}
	return resp.GetEnabled(), nil
}
