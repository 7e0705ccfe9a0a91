//! Sets of a claim's terms or quantities, by index: a bitset that grows with the claim, so a
//! long claim keeps every term (the first 64 members live inline, without allocating).

use smallvec::SmallVec;

#[derive(Clone, Default, Debug)]
pub(crate) struct Bits(SmallVec<[u64; 1]>);

impl Bits {
    pub fn insert(&mut self, i: usize) {
        let word = i / 64;
        if self.0.len() <= word {
            self.0.resize(word + 1, 0);
        }
        self.0[word] |= 1 << (i % 64);
    }

    pub fn contains(&self, i: usize) -> bool {
        self.0.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 != 0)
    }

    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }

    /// The number of members.
    pub fn len(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }

    pub fn clear(&mut self) {
        self.0.clear();
    }

    /// Adds the members of `other`.
    pub fn union_with(&mut self, other: &Bits) {
        if self.0.len() < other.0.len() {
            self.0.resize(other.0.len(), 0);
        }
        for (w, o) in self.0.iter_mut().zip(&other.0) {
            *w |= o;
        }
    }

    /// The members of `self` that `other` lacks.
    pub fn difference(&self, other: &Bits) -> Bits {
        let mut out = self.clone();
        for (w, o) in out.0.iter_mut().zip(&other.0) {
            *w &= !o;
        }
        out
    }

    /// The members, lowest first.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(k, &word)| {
            let mut w = word;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let i = w.trailing_zeros() as usize;
                w &= w - 1;
                Some(64 * k + i)
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Bits;

    fn single(i: usize) -> Bits {
        let mut b = Bits::default();
        b.insert(i);
        b
    }

    #[test]
    fn grows_past_64_members() {
        let mut b = single(3);
        b.insert(64);
        b.insert(200);
        assert!(b.contains(200) && b.contains(64) && !b.contains(65));
        assert_eq!(b.iter().collect::<Vec<_>>(), [3, 64, 200]);
        assert_eq!(b.len(), 3);
        let d = b.difference(&single(64));
        assert_eq!(d.iter().collect::<Vec<_>>(), [3, 200]);
        let mut u = single(1);
        u.union_with(&d);
        assert_eq!(u.iter().collect::<Vec<_>>(), [1, 3, 200]);
        assert!(!u.is_empty() && Bits::default().is_empty());
    }
}
