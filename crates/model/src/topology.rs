//! Nodes, link directions and static routes.
//!
//! Every link has two directions: `2 i` goes from `between[0]` to `between[1]`
//! of link `i`, `2 i + 1` the other way. A route is the list of directions a
//! packet crosses. Routes are computed before the run: the shortest path by
//! hop count, ties broken toward lower link indices (so a chain, a dumbbell
//! or a tree has exactly the route one expects), or an explicit node path.
//! With handoffs of multi-homed nodes, a flow has one route per attachment
//! of the nodes (over the links they are attached to), and the simulation
//! switches between them at each handoff.

use std::collections::{BTreeMap, VecDeque};

/// Index of a link direction.
pub type DirId = u32;

/// The forward direction of link `i`.
pub fn forward(i: usize) -> DirId {
    (2 * i) as DirId
}

/// The nodes and the directed adjacency of a scenario.
#[derive(Clone, Debug)]
pub struct Topology {
    nodes: Vec<String>,
    index: BTreeMap<String, usize>,
    /// For each node: (neighbour, direction leaving this node), in link order.
    adj: Vec<Vec<(usize, DirId)>>,
    /// For each direction: (from node, to node).
    ends: Vec<(usize, usize)>,
}

impl Topology {
    /// Builds the graph of links given by the two nodes each connects, in
    /// link order (`Scenario::topology` gives a scenario's); nodes are
    /// numbered in order of first appearance.
    pub fn new<'a>(links: impl IntoIterator<Item = &'a [String; 2]>) -> Self {
        let links: Vec<&[String; 2]> = links.into_iter().collect();
        let mut nodes: Vec<String> = Vec::new();
        let mut index: BTreeMap<String, usize> = BTreeMap::new();
        for n in links.iter().flat_map(|l| l.iter()) {
            if !index.contains_key(n) {
                index.insert(n.clone(), nodes.len());
                nodes.push(n.clone());
            }
        }
        let mut adj = vec![Vec::new(); nodes.len()];
        let mut ends = Vec::with_capacity(2 * links.len());
        for (i, l) in links.iter().enumerate() {
            let a = index[&l[0]];
            let b = index[&l[1]];
            adj[a].push((b, forward(i)));
            adj[b].push((a, forward(i) + 1));
            ends.push((a, b));
            ends.push((b, a));
        }
        Topology {
            nodes,
            index,
            adj,
            ends,
        }
    }

    /// Node names.
    pub fn nodes(&self) -> &[String] {
        &self.nodes
    }

    /// Index of a node.
    pub fn node(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    /// (from, to) node indices of a direction.
    pub fn ends(&self, dir: DirId) -> (usize, usize) {
        self.ends[dir as usize]
    }

    /// The shortest route (by hops) from node `from` to node `to`.
    pub fn shortest_route(&self, from: &str, to: &str) -> Option<Vec<DirId>> {
        self.shortest_route_avoiding(from, to, &[])
    }

    /// The shortest route (by hops) from node `from` to node `to` over the
    /// links `i` for which `avoid[i]` is not true.
    pub fn shortest_route_avoiding(
        &self,
        from: &str,
        to: &str,
        avoid: &[bool],
    ) -> Option<Vec<DirId>> {
        let (s, t) = (self.node(from)?, self.node(to)?);
        let usable = |d: DirId| !avoid.get(d as usize / 2).copied().unwrap_or(false);
        let mut parent: Vec<Option<(usize, DirId)>> = vec![None; self.nodes.len()];
        let mut seen = vec![false; self.nodes.len()];
        let mut q = VecDeque::from([s]);
        seen[s] = true;
        while let Some(u) = q.pop_front() {
            if u == t {
                break;
            }
            for &(v, d) in &self.adj[u] {
                if !seen[v] && usable(d) {
                    seen[v] = true;
                    parent[v] = Some((u, d));
                    q.push_back(v);
                }
            }
        }
        if !seen[t] {
            return None;
        }
        let mut route = Vec::new();
        let mut v = t;
        while v != s {
            let (u, d) = parent[v].expect("visited nodes have parents");
            route.push(d);
            v = u;
        }
        route.reverse();
        Some(route)
    }

    /// The routes of a (validated) flow from `from` to `to`: its data's and
    /// its ACKs', along its `path` (the ACKs along the reverse) or the
    /// shortest ones over the links `i` for which `avoid[i]` is not true
    /// (the links a multi-homed node is not attached to; `&[]`: every link).
    pub fn flow_routes(
        &self,
        from: &str,
        to: &str,
        path: Option<&[String]>,
        avoid: &[bool],
    ) -> (Vec<DirId>, Vec<DirId>) {
        match path {
            Some(p) => {
                let back: Vec<String> = p.iter().rev().cloned().collect();
                (
                    self.route_along(p).expect("validated"),
                    self.route_along(&back).expect("validated"),
                )
            }
            None => (
                self.shortest_route_avoiding(from, to, avoid)
                    .expect("validated"),
                self.shortest_route_avoiding(to, from, avoid)
                    .expect("validated"),
            ),
        }
    }

    /// The route through the given nodes, crossing the first link (in link
    /// order) between each consecutive pair.
    pub fn route_along(&self, path: &[String]) -> Result<Vec<DirId>, String> {
        if path.len() < 2 {
            return Err("needs at least two nodes".into());
        }
        let mut route = Vec::new();
        for w in path.windows(2) {
            let a = self
                .node(&w[0])
                .ok_or_else(|| format!("\"{}\" is not a node", w[0]))?;
            let b = self
                .node(&w[1])
                .ok_or_else(|| format!("\"{}\" is not a node", w[1]))?;
            let d = self.adj[a]
                .iter()
                .find(|(v, _)| *v == b)
                .map(|&(_, d)| d)
                .ok_or_else(|| format!("no link between \"{}\" and \"{}\"", w[0], w[1]))?;
            route.push(d);
        }
        Ok(route)
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::Scenario;

    fn scenario(links: &[(&str, &str)]) -> Scenario {
        let mut t = String::from("duration = \"1s\"\n");
        for (a, b) in links {
            t += &format!(
                "[[links]]\nbetween = [\"{a}\", \"{b}\"]\nrate = \"1Mbit/s\"\ndelay = \"1ms\"\n"
            );
        }
        let (a, b) = links[0];
        t += &format!("[[flows]]\nfrom = \"{a}\"\nto = \"{b}\"\n");
        Scenario::from_toml_str(&t).unwrap()
    }

    #[test]
    fn chain_routes_forward_and_back() {
        let sc = scenario(&[("s", "r1"), ("r1", "r2"), ("r2", "d")]);
        let t = sc.topology();
        assert_eq!(t.shortest_route("s", "d").unwrap(), vec![0, 2, 4]);
        assert_eq!(t.shortest_route("d", "s").unwrap(), vec![5, 3, 1]);
        assert_eq!(t.ends(3), (2, 1));
    }

    #[test]
    fn dumbbell_and_explicit_paths() {
        let sc = scenario(&[
            ("s1", "r1"),
            ("s2", "r1"),
            ("r1", "r2"),
            ("r2", "d1"),
            ("r2", "d2"),
            ("r1", "r2"), // a parallel link, used only by explicit paths
        ]);
        let t = sc.topology();
        assert_eq!(t.shortest_route("s2", "d2").unwrap(), vec![2, 4, 8]);
        let via = ["s1", "r1", "r2", "d1"].map(String::from);
        assert_eq!(t.route_along(&via).unwrap(), vec![0, 4, 6]);
        assert!(t.route_along(&["s1".into(), "d1".into()]).is_err());
        assert!(t.shortest_route("s1", "nowhere").is_none());
    }
}
