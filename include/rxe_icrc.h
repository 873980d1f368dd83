/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The invariant CRC of RoCEv2 packets.
 */
#ifndef RXE_ICRC_H
#define RXE_ICRC_H

#include <linux/skbuff.h>

/* rxe_icrc.c APIs: */
__le32 rxe_icrc_compute(const struct sk_buff *skb, unsigned int bth_off,
			unsigned int len);
bool rxe_icrc_selftest(void);
void rxe_icrc_module_init(void);
void rxe_icrc_module_exit(void);

#endif /* RXE_ICRC_H */
