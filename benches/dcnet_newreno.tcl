# The speed benchmark's case (a) in ns-2.35, written for wavelab's
# benches/compare_ns2.sh: the DCNET 2016 handover path, one NewReno flow,
# 360 simulated seconds, no trace files.
#
#   sender --100Mb/1ms-- r1 --8Mb/240ms, 100 pkt-- r2 --100Mb/1ms-- receiver
#
# At 300 s the bottleneck drops every packet in both directions for 2 s (an
# error model at the queue's exit, rate 1) and becomes 2 Mbit/s / 30 ms.
# Packets are 1000 bytes (960 bytes of payload + 40 of headers); the
# receiver delays ACKs (every second segment, at most 200 ms); initial
# window 1. It prints one line of figures: the wall time of `$ns run` (Tcl's
# clock, so process start-up is not counted), the simulated time, the data
# packets the sender sent and the ACKs it received.

set ns [new Simulator]

set s [$ns node]
set r1 [$ns node]
set r2 [$ns node]
set d [$ns node]
$ns duplex-link $s $r1 100Mb 1ms DropTail
$ns duplex-link $r1 $r2 8Mb 240ms DropTail
$ns duplex-link $r2 $d 100Mb 1ms DropTail
$ns queue-limit $r1 $r2 100
$ns queue-limit $r2 $r1 100
foreach {a b} [list $s $r1 $r1 $s $r2 $d $d $r2] {
    $ns queue-limit $a $b 100000
}

Agent/TCP set packetSize_ 960
Agent/TCP set window_ 1000000
Agent/TCP set windowInit_ 1
Agent/TCPSink/DelAck set interval_ 200ms

set tcp [new Agent/TCP/Newreno]
set sink [new Agent/TCPSink/DelAck]
$ns attach-agent $s $tcp
$ns attach-agent $d $sink
$ns connect $tcp $sink
set ftp [new Application/FTP]
$ftp attach-agent $tcp
$ns at 0.0 "$ftp start"

# the outage: error models after the bottleneck queues, off until 300 s
set null [new Agent/Null]
foreach {a b name} [list $r1 $r2 emf $r2 $r1 emr] {
    set $name [new ErrorModel]
    [set $name] unit pkt
    [set $name] set rate_ 0.0
    [set $name] ranvar [new RandomVariable/Uniform]
    [set $name] drop-target $null
    $ns lossmodel [set $name] $a $b
}
proc handover {} {
    global ns r1 r2 emf emr
    $emf set rate_ 1.0
    $emr set rate_ 1.0
    foreach {a b} [list $r1 $r2 $r2 $r1] {
        set l [[$ns link $a $b] link]
        $l set bandwidth_ 2Mb
        $l set delay_ 30ms
    }
}
proc restore {} {
    global emf emr
    $emf set rate_ 0.0
    $emr set rate_ 0.0
}
proc finish {} {
    global ns tcp t0
    set wall [expr {([clock microseconds] - $t0) / 1e6}]
    puts "ns2 wall_s $wall sim_s [$ns now] data_sent [$tcp set ndatapack_] acks_received [$tcp set nackpack_] retransmissions [$tcp set nrexmitpack_]"
    exit 0
}
$ns at 300.0 "handover"
$ns at 302.0 "restore"
$ns at 360.0 "finish"

set t0 [clock microseconds]
$ns run
