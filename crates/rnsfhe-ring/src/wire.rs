//! Wire encoding of RNS polynomials ([`rnsfhe_math::wire`]): limb by limb, each residue packed at the
//! bit width of its modulus (`ceil(log2 q_i)` bits, so a 50-bit prime costs 50 bits, not 64), each limb
//! padded to a whole byte.
//!
//! The basis and form are **not** written: they are implied by the parameters and the field (a public
//! key lives over `Q` in NTT form, a ciphertext part over `Q_l` with `l` written before it), so a reader
//! allocates exactly `limbs x N` words from the trusted basis and checks every residue against its
//! modulus as it reads.

use std::io::{self, Read, Write};
use std::sync::Arc;

use rnsfhe_math::wire::{packed_len, DecodeError, WireReader, WireWriter};
use rnsfhe_math::Modulus;

use crate::basis::RnsBasis;
use crate::poly::{Form, Poly};

/// Bits per residue of modulus `m` on the wire: the bit length of `m - 1`, the largest residue (also the
/// width of the LWE layer's ciphertext components, whose modulus need not be prime).
pub fn residue_width(m: &Modulus) -> u32 {
    (64 - (m.value() - 1).leading_zeros()).max(1)
}

/// Size in bytes of a polynomial over `basis` on the wire.
pub fn poly_wire_size(basis: &RnsBasis) -> u64 {
    basis
        .moduli()
        .iter()
        .map(|m| packed_len(basis.degree(), residue_width(m)))
        .sum()
}

impl<F: Form> Poly<F> {
    /// Size in bytes of this polynomial on the wire ([`poly_wire_size`] of its basis).
    pub fn wire_size(&self) -> u64 {
        poly_wire_size(self.basis())
    }

    /// Writes the residues, limb by limb, packed at each modulus' bit width.
    pub fn write_wire<W: Write>(&self, w: &mut WireWriter<W>) -> io::Result<()> {
        for (limb, m) in self.limbs().zip(self.basis().moduli()) {
            w.packed(limb, residue_width(m))?;
        }
        Ok(())
    }

    /// Reads a polynomial over `basis` in form `F` written by [`Poly::write_wire`], checking every
    /// residue against its modulus; errors name `field`, the limb and the coefficient index.
    pub fn read_wire<R: Read>(
        r: &mut WireReader<R>,
        basis: &Arc<RnsBasis>,
        field: &str,
    ) -> Result<Self, DecodeError> {
        let n = basis.degree();
        let mut data = vec![0u64; basis.len() * n];
        for (i, (limb, m)) in data.chunks_exact_mut(n).zip(basis.moduli()).enumerate() {
            r.packed(
                &format!("{field}.limb[{i}]"),
                limb,
                residue_width(m),
                m.value(),
            )?;
        }
        // Every residue was checked against its modulus above.
        Ok(Self::from_data_unchecked(basis, data))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::poly::{Coeff, Ntt};
    use rnsfhe_math::primes::ntt_primes_of_bits;
    use rnsfhe_math::wire::DecodeErrorKind;

    fn basis() -> Arc<RnsBasis> {
        let mut moduli = ntt_primes_of_bits(30, 32, 1, &[]).unwrap();
        moduli.extend(ntt_primes_of_bits(50, 32, 1, &[]).unwrap());
        RnsBasis::new(16, &moduli).unwrap()
    }

    #[test]
    fn round_trip_and_size() {
        let b = basis();
        let data: Vec<u64> = b
            .moduli()
            .iter()
            .flat_map(|m| {
                (0..16u64).map(move |i| (m.value() - 1).wrapping_sub(i * 977) % m.value())
            })
            .collect();
        let p = Poly::<Ntt>::from_data(&b, data).unwrap();
        let mut w = WireWriter::new(Vec::new());
        p.write_wire(&mut w).unwrap();
        let bytes = w.into_inner();
        assert_eq!(bytes.len() as u64, p.wire_size());
        assert_eq!(p.wire_size(), 60 + 100, "16 x 30 bits + 16 x 50 bits");
        let q = Poly::<Ntt>::read_wire(&mut WireReader::new(&bytes[..]), &b, "p").unwrap();
        assert_eq!(p, q);
    }

    #[test]
    fn residue_at_or_above_its_modulus_is_refused_with_its_position() {
        let b = basis();
        let p = Poly::<Coeff>::zero(&b);
        let mut w = WireWriter::new(Vec::new());
        p.write_wire(&mut w).unwrap();
        let mut bytes = w.into_inner();
        // Coefficient 0 of limb 1 (starts at byte 60) set to all ones: 2^50 - 1 >= q_1.
        for b in bytes.iter_mut().skip(60).take(6) {
            *b = 0xff;
        }
        bytes[66] = 0x03;
        let err = Poly::<Coeff>::read_wire(&mut WireReader::new(&bytes[..]), &b, "c0").unwrap_err();
        assert_eq!(err.field, "c0.limb[1][0]");
        assert_eq!(err.offset, 60);
        assert!(matches!(err.kind, DecodeErrorKind::OutOfRange { .. }));
    }
}
