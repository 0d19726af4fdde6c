package sqlreview

import "testing"

// TestInnoDBLocks reads the lock list of one transaction out of an InnoDB status report (as MariaDB 10.11 prints it
// with innodb_status_output_locks on), leaving the other transactions' locks out.
func TestInnoDBLocks(t *testing.T) {
	status := "LIST OF TRANSACTIONS FOR EACH SESSION:\n" +
		"---TRANSACTION 266560, ACTIVE 3 sec\n" +
		"2 lock struct(s), heap size 1128, 1 row lock(s)\n" +
		"MariaDB thread id 7, OS thread handle 1, query id 9 127.0.0.1 root\n" +
		"TABLE LOCK table `t_other`.`pc_work_items` trx id 266560 lock mode IX\n" +
		"RECORD LOCKS space id 9 page no 3 n bits 72 index PRIMARY of table `t_other`.`pc_work_items` trx id 266560 lock_mode X locks rec but not gap\n" +
		"Record lock, heap no 2 PHYSICAL RECORD: n_fields 5; compact format; info bits 0\n" +
		"---TRANSACTION 266553, ACTIVE 0 sec\n" +
		"5 lock struct(s), heap size 1128, 5 row lock(s), undo log entries 2\n" +
		"MariaDB thread id 115, OS thread handle 131063369184960, query id 805067 127.0.0.1 root starting\n" +
		"show engine innodb status\n" +
		"TABLE LOCK table `t_1`.`pc_work_lanes` trx id 266553 lock mode IX\n" +
		"RECORD LOCKS space id 105 page no 3 n bits 320 index PRIMARY of table `t_1`.`pc_work_lanes` trx id 266553 lock_mode X locks rec but not gap\n" +
		"Record lock, heap no 3 PHYSICAL RECORD: n_fields 5; compact format; info bits 0\n" +
		" 0: len 4; hex 80000002; asc     ;;\n" +
		"\n" +
		"Record lock, heap no 4 PHYSICAL RECORD: n_fields 5; compact format; info bits 0\n" +
		" 0: len 4; hex 80000005; asc     ;;\n" +
		"\n" +
		"RECORD LOCKS space id 106 page no 4 n bits 320 index pc_work_items_lane_sequence_key of table `t_1`.`pc_work_items` trx id 266553 lock_mode X\n" +
		"Record lock, heap no 1 PHYSICAL RECORD: n_fields 1; compact format; info bits 0\n" +
		" 0: len 8; hex 73757072656d756d; asc supremum;;\n" +
		"\n" +
		"Record lock, heap no 7 PHYSICAL RECORD: n_fields 2; compact format; info bits 0\n" +
		"RECORD LOCKS space id 106 page no 5 n bits 320 index pc_work_items_lane_sequence_key of table `t_1`.`pc_work_items` trx id 266553 lock_mode X locks gap before rec insert intention\n" +
		"Record lock, heap no 9 PHYSICAL RECORD: n_fields 2; compact format; info bits 0\n" +
		"RECORD LOCKS space id 107 page no 6 n bits 320 index PRIMARY of table `t_1`.`pc_work_keys` trx id 266553 lock mode S locks gap before rec\n" +
		"Record lock, heap no 5 PHYSICAL RECORD: n_fields 2; compact format; info bits 0\n" +
		"RECORD LOCKS space id 108 page no 7 n bits 320 index PRIMARY of table `t_1`.`pc_work_attempts` trx id 266553 lock_mode X locks rec but not gap\n" +
		"--------\nFILE I/O\n"
	want := "5 row lock(s) in 5 lock structure(s), 2 row(s) written: pc_work_lanes IX; " +
		"pc_work_lanes.PRIMARY X rec ×2; pc_work_items.pc_work_items_lane_sequence_key X next-key ×1 + supremum; " +
		"pc_work_items.pc_work_items_lane_sequence_key X insert intention ×1; pc_work_keys.PRIMARY S gap ×1; " +
		"pc_work_attempts.PRIMARY X rec ×0"
	if got := innodbLocks(status, 115); got != want {
		t.Errorf("innodbLocks:\n got %s\nwant %s", got, want)
	}
	if got, want := innodbLocks(status, 8), "none (no InnoDB transaction started)"; got != want {
		t.Errorf("another connection: got %q, want %q", got, want)
	}
}
